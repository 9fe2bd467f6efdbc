build-dbg/obj/import_pods.o: sim/import_pods.c sim/import_int.h \
 include/gpuplan/catalog.h include/gpuplan/common.h \
 include/gpuplan/import.h include/gpuplan/scenario.h \
 include/gpuplan/gpupolicy.h include/gpuplan/ytree.h
sim/import_int.h:
include/gpuplan/catalog.h:
include/gpuplan/common.h:
include/gpuplan/import.h:
include/gpuplan/scenario.h:
include/gpuplan/gpupolicy.h:
include/gpuplan/ytree.h:
