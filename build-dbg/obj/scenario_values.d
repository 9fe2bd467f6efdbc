build-dbg/obj/scenario_values.o: sim/scenario_values.c \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/gpupolicy.h \
 include/gpuplan/units.h sim/scenario_int.h include/gpuplan/ytree.h
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/units.h:
sim/scenario_int.h:
include/gpuplan/ytree.h:
