build-dbg/obj/ytree.o: sim/ytree.c include/gpuplan/ytree.h \
 include/gpuplan/common.h
include/gpuplan/ytree.h:
include/gpuplan/common.h:
