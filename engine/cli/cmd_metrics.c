/* placeholder until the metrics command lands */
#include "cli.h"
int tg_cmd_metrics(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracegate: 'metrics' is not available in this build\n");
    return TG_EINTERNAL;
}
