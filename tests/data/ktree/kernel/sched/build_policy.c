#include "sched.h"
#include "rt.c"
