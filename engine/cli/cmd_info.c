/* placeholder until the info command lands */
#include "cli.h"
int tg_cmd_info(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracegate: 'info' is not available in this build\n");
    return TG_EINTERNAL;
}
