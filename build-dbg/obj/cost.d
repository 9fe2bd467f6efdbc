build-dbg/obj/cost.o: sim/cost.c include/gpuplan/cost.h \
 include/gpuplan/results.h include/gpuplan/common.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/gpupolicy.h
include/gpuplan/cost.h:
include/gpuplan/results.h:
include/gpuplan/common.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/gpupolicy.h:
