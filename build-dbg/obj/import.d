build-dbg/obj/import.o: sim/import.c sim/import_int.h \
 include/gpuplan/catalog.h include/gpuplan/common.h \
 include/gpuplan/import.h include/gpuplan/scenario.h \
 include/gpuplan/gpupolicy.h include/gpuplan/ytree.h \
 include/gpuplan/units.h
sim/import_int.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/import.h:
include/gpuplan/scenario.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/ytree.h:
include/gpuplan/units.h:
