build-dbg/obj/import_extra.o: sim/import_extra.c sim/import_int.h \
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
