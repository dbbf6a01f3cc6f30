#include "a.c"
