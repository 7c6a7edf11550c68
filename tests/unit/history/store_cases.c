/* placeholder: replaced by its owner */
#include "store_cases.h"
