/* placeholder until the baseline command lands */
#include "cli.h"
int tg_cmd_baseline(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracegate: 'baseline' is not available in this build\n");
    return TG_EINTERNAL;
}
