build-dbg/obj/inflation.o: sim/inflation.c include/gpuplan/inflation.h \
 include/gpuplan/results.h include/gpuplan/common.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/gpupolicy.h include/gpuplan/arrivals.h \
 include/gpuplan/openb.h include/gpuplan/units.h
include/gpuplan/inflation.h:
include/gpuplan/results.h:
include/gpuplan/common.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/arrivals.h:
include/gpuplan/openb.h:
include/gpuplan/units.h:
