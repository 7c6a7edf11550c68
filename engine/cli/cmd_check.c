/* placeholder until the check command lands */
#include "cli.h"
int tg_cmd_check(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracegate: 'check' is not available in this build\n");
    return TG_EINTERNAL;
}
