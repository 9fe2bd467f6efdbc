build-dbg/obj/units.o: sim/units.c include/gpuplan/units.h \
 include/gpuplan/common.h
include/gpuplan/units.h:
include/gpuplan/common.h:
