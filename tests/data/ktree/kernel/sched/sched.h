struct cfs_rq {
	long load;
};
