build-dbg/obj/csv.o: sim/csv.c include/gpuplan/csv.h \
 include/gpuplan/common.h
include/gpuplan/csv.h:
include/gpuplan/common.h:
