build-dbg/obj/estimate.o: sim/estimate.c include/gpuplan/estimate.h \
 include/gpuplan/footprint.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/roofline.h \
 include/gpuplan/ytree.h
include/gpuplan/estimate.h:
include/gpuplan/footprint.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/roofline.h:
include/gpuplan/ytree.h:
