build-dbg/obj/placement.o: sim/placement.c include/gpuplan/placement.h \
 include/gpuplan/cluster.h include/gpuplan/contention.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/gpupolicy.h \
 include/gpuplan/gpuplace.h
include/gpuplan/placement.h:
include/gpuplan/cluster.h:
include/gpuplan/contention.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/gpuplace.h:
