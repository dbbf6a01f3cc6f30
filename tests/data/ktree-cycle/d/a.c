#include "b.c"
