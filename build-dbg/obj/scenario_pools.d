build-dbg/obj/scenario_pools.o: sim/scenario_pools.c \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/gpupolicy.h \
 include/gpuplan/openb.h include/gpuplan/units.h sim/scenario_int.h \
 include/gpuplan/ytree.h
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/openb.h:
include/gpuplan/units.h:
sim/scenario_int.h:
include/gpuplan/ytree.h:
