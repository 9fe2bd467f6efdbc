build-dbg/obj/footprint.o: sim/footprint.c include/gpuplan/footprint.h \
 include/gpuplan/catalog.h include/gpuplan/common.h
include/gpuplan/footprint.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
