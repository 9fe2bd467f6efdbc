build-dbg/obj/roofline.o: sim/roofline.c include/gpuplan/roofline.h \
 include/gpuplan/catalog.h include/gpuplan/common.h \
 include/gpuplan/footprint.h
include/gpuplan/roofline.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/footprint.h:
