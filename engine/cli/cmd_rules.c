/* placeholder until the rules command lands */
#include "cli.h"
int tg_cmd_rules(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracegate: 'rules' is not available in this build\n");
    return TG_EINTERNAL;
}
int tg_cmd_explain(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracegate: 'explain' is not available in this build\n");
    return TG_EINTERNAL;
}
