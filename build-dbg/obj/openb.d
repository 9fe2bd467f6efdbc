build-dbg/obj/openb.o: sim/openb.c include/gpuplan/openb.h \
 include/gpuplan/scenario.h include/gpuplan/catalog.h \
 include/gpuplan/common.h include/gpuplan/gpupolicy.h \
 include/gpuplan/csv.h include/gpuplan/units.h
include/gpuplan/openb.h:
include/gpuplan/scenario.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/csv.h:
include/gpuplan/units.h:
