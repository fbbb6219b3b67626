"""The process pool: the workers that grade a class, on this machine (`LocalPool`) or on a Dask
cluster (`DaskPool`), behind one protocol (`pool.protocol.Pool`)."""
