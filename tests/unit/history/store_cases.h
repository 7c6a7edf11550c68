/* placeholder: replaced by its owner */
#ifndef TG_STORE_CASES_H
#define TG_STORE_CASES_H
#endif
