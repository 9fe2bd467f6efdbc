build-dbg/obj/scenario.o: sim/scenario.c include/gpuplan/scenario.h \
 include/gpuplan/catalog.h include/gpuplan/common.h \
 include/gpuplan/gpupolicy.h include/gpuplan/openb.h \
 include/gpuplan/sha256.h include/gpuplan/units.h sim/scenario_int.h \
 include/gpuplan/ytree.h
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/openb.h:
include/gpuplan/sha256.h:
include/gpuplan/units.h:
sim/scenario_int.h:
include/gpuplan/ytree.h:
