/* Names of severities and verdicts, as the JSON contract spells them. */
#include "result.h"

const char *tg_severity_name(tg_severity s)
{
    static const char *const names[] = {"info", "warning", "error"};
    return (unsigned)s < 3 ? names[s] : "?";
}

const char *tg_verdict_name(tg_verdict v)
{
    static const char *const names[] = {"pass", "fail", "skip", "error"};
    return (unsigned)v < 4 ? names[v] : "?";
}
