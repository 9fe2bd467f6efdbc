build-dbg/obj/advise.o: sim/advise.c include/gpuplan/advise.h \
 include/gpuplan/results.h include/gpuplan/common.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/gpupolicy.h include/gpuplan/store.h \
 include/gpuplan/diagnose.h include/gpuplan/footprint.h \
 include/gpuplan/search.h include/gpuplan/sim.h
include/gpuplan/advise.h:
include/gpuplan/results.h:
include/gpuplan/common.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/store.h:
include/gpuplan/diagnose.h:
include/gpuplan/footprint.h:
include/gpuplan/search.h:
include/gpuplan/sim.h:
