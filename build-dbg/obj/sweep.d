build-dbg/obj/sweep.o: sim/sweep.c include/gpuplan/sweep.h \
 include/gpuplan/common.h include/gpuplan/results.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/gpupolicy.h include/gpuplan/sim.h \
 include/gpuplan/store.h include/gpuplan/units.h include/gpuplan/ytree.h
include/gpuplan/sweep.h:
include/gpuplan/common.h:
include/gpuplan/results.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/sim.h:
include/gpuplan/store.h:
include/gpuplan/units.h:
include/gpuplan/ytree.h:
