build-dbg/obj/catalog.o: sim/catalog.c include/gpuplan/catalog.h \
 include/gpuplan/common.h
include/gpuplan/catalog.h:
include/gpuplan/common.h:
