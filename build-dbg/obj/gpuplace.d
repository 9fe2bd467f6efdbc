build-dbg/obj/gpuplace.o: sim/gpuplace.c include/gpuplan/gpuplace.h \
 include/gpuplan/cluster.h include/gpuplan/contention.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/gpupolicy.h \
 include/gpuplan/arrivals.h
include/gpuplan/gpuplace.h:
include/gpuplan/cluster.h:
include/gpuplan/contention.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/arrivals.h:
