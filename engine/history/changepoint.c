/* placeholder: filled by its owner (see engine/history/history.h) */
#include "history.h"
