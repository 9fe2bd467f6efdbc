build-dbg/obj/scenario_inference.o: sim/scenario_inference.c \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/gpupolicy.h \
 include/gpuplan/footprint.h include/gpuplan/requests.h \
 include/gpuplan/units.h sim/scenario_int.h include/gpuplan/ytree.h
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/footprint.h:
include/gpuplan/requests.h:
include/gpuplan/units.h:
sim/scenario_int.h:
include/gpuplan/ytree.h:
