int rt(void)
{
	return 3;
}
