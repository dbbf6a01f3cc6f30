#include "sched.h"
int fair(void)
{
	return 2;
}
