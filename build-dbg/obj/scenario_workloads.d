build-dbg/obj/scenario_workloads.o: sim/scenario_workloads.c \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/gpupolicy.h \
 include/gpuplan/footprint.h include/gpuplan/openb.h \
 include/gpuplan/trace.h include/gpuplan/units.h sim/scenario_int.h \
 include/gpuplan/ytree.h
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/footprint.h:
include/gpuplan/openb.h:
include/gpuplan/trace.h:
include/gpuplan/units.h:
sim/scenario_int.h:
include/gpuplan/ytree.h:
