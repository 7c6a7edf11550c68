/* placeholder; the trace tests implement the fixture builder */
#include "fixture.h"
const char *const tg_fixture_schema_3_0 = "";
const char *const tg_fixture_schema_2_9 = "";
const char *const tg_fixture_schema_3_25 = "";
char *tg_fixture_from_sql(const char *sql) { (void)sql; return 0; }
char *tg_fixture_build(const char *a, const char *b) { (void)a; (void)b; return 0; }
void tg_fixture_remove(char *path) { (void)path; }
