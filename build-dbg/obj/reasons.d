build-dbg/obj/reasons.o: sim/reasons.c include/gpuplan/reasons.h \
 include/gpuplan/results.h include/gpuplan/common.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/gpupolicy.h
include/gpuplan/reasons.h:
include/gpuplan/results.h:
include/gpuplan/common.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/gpupolicy.h:
