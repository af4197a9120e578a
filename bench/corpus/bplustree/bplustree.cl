// bplustree.cl - B+ tree searches: single keys and key ranges.
//
// Written after Rodinia's opencl/b+tree (kernel/kernel_gpu_opencl.cl,
// findK, and kernel/kernel_gpu_opencl_2.cl, findRangeK): one work-group of
// 256 work-items (the tree's order) per query; each level, the work-item
// whose key interval holds the searched key moves the query to the child it
// points to, and after the last level the work-item holding the key writes
// the answer.
//
// Differs from Rodinia: the tree's order, which the host passes as
// -DDEFAULT_ORDER=256 (and DEFAULT_ORDER_2 in the second file), is defined
// here, since the corpus builds the program without options; both kernels
// share one knode struct (the two files define the same layout).

#define DEFAULT_ORDER 256

typedef struct record {
  int value;
} record;

typedef struct knode {
  int location;
  int indices[DEFAULT_ORDER + 1];
  int keys[DEFAULT_ORDER + 1];
  bool is_leaf;
  int num_keys;
} knode;

__kernel void findK(long Height, __global knode *KnodesD, long KnodesElem,
                    __global record *RecordsD, __global long *CurrKnodeD,
                    __global long *OffsetD, __global int *KeysD,
                    __global record *AnsD) {
  int Thid = get_local_id(0);
  int Bid = get_group_id(0);
  for (int I = 0; I < Height; I++) {
    // As in Rodinia, the children come from the node at OffsetD[Bid] (equal
    // to CurrKnodeD[Bid] at this point: only one work-item moves it).
    if ((KnodesD[CurrKnodeD[Bid]].keys[Thid]) <= KeysD[Bid] &&
        (KnodesD[CurrKnodeD[Bid]].keys[Thid + 1] > KeysD[Bid])) {
      if (KnodesD[OffsetD[Bid]].indices[Thid] < KnodesElem)
        OffsetD[Bid] = KnodesD[OffsetD[Bid]].indices[Thid];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (Thid == 0)
      CurrKnodeD[Bid] = OffsetD[Bid];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (KnodesD[CurrKnodeD[Bid]].keys[Thid] == KeysD[Bid])
    AnsD[Bid].value = RecordsD[KnodesD[CurrKnodeD[Bid]].indices[Thid]].value;
}

__kernel void findRangeK(long Height, __global knode *KnodesD, long KnodesElem,
                         __global long *CurrKnodeD, __global long *OffsetD,
                         __global long *LastKnodeD, __global long *Offset2D,
                         __global int *StartD, __global int *EndD,
                         __global int *RecstartD, __global int *ReclenD) {
  int Thid = get_local_id(0);
  int Bid = get_group_id(0);
  for (int I = 0; I < Height; I++) {
    if ((KnodesD[CurrKnodeD[Bid]].keys[Thid] <= StartD[Bid]) &&
        (KnodesD[CurrKnodeD[Bid]].keys[Thid + 1] > StartD[Bid])) {
      if (KnodesD[CurrKnodeD[Bid]].indices[Thid] < KnodesElem)
        OffsetD[Bid] = KnodesD[CurrKnodeD[Bid]].indices[Thid];
    }
    if ((KnodesD[LastKnodeD[Bid]].keys[Thid] <= EndD[Bid]) &&
        (KnodesD[LastKnodeD[Bid]].keys[Thid + 1] > EndD[Bid])) {
      if (KnodesD[LastKnodeD[Bid]].indices[Thid] < KnodesElem)
        Offset2D[Bid] = KnodesD[LastKnodeD[Bid]].indices[Thid];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (Thid == 0) {
      CurrKnodeD[Bid] = OffsetD[Bid];
      LastKnodeD[Bid] = Offset2D[Bid];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (KnodesD[CurrKnodeD[Bid]].keys[Thid] == StartD[Bid])
    RecstartD[Bid] = KnodesD[CurrKnodeD[Bid]].indices[Thid];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (KnodesD[LastKnodeD[Bid]].keys[Thid] == EndD[Bid])
    ReclenD[Bid] = KnodesD[LastKnodeD[Bid]].indices[Thid] - RecstartD[Bid] + 1;
}
