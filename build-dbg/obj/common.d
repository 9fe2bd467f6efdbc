build-dbg/obj/common.o: sim/common.c include/gpuplan/common.h
include/gpuplan/common.h:
