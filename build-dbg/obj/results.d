build-dbg/obj/results.o: sim/results.c include/gpuplan/results.h \
 include/gpuplan/common.h include/gpuplan/scenario.h \
 include/gpuplan/catalog.h include/gpuplan/gpupolicy.h
include/gpuplan/results.h:
include/gpuplan/common.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/gpupolicy.h:
