build-dbg/obj/search.o: sim/search.c include/gpuplan/search.h \
 include/gpuplan/store.h include/gpuplan/results.h \
 include/gpuplan/common.h include/gpuplan/scenario.h \
 include/gpuplan/catalog.h include/gpuplan/gpupolicy.h \
 include/gpuplan/sim.h include/gpuplan/units.h
include/gpuplan/search.h:
include/gpuplan/store.h:
include/gpuplan/results.h:
include/gpuplan/common.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/sim.h:
include/gpuplan/units.h:
