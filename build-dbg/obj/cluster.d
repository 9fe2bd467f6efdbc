build-dbg/obj/cluster.o: sim/cluster.c include/gpuplan/cluster.h \
 include/gpuplan/contention.h include/gpuplan/scenario.h \
 include/gpuplan/catalog.h include/gpuplan/common.h \
 include/gpuplan/gpupolicy.h
include/gpuplan/cluster.h:
include/gpuplan/contention.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
