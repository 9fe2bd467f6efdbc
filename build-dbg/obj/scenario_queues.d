build-dbg/obj/scenario_queues.o: sim/scenario_queues.c \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/gpupolicy.h sim/scenario_int.h \
 include/gpuplan/ytree.h
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
sim/scenario_int.h:
include/gpuplan/ytree.h:
