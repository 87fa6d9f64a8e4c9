# MPI tests for this area (included from CMakeLists.txt): virtual topologies and
# neighborhood collectives (label topo).
aptus_mpi_test(NAME topo_dims_np1 SOURCE topo_dims.c NP 1 LABELS topo)
foreach(np 1 2 3 4)
  aptus_mpi_test(NAME topo_cart_np${np} SOURCE topo_cart.c NP ${np} LABELS topo)
  aptus_mpi_test(NAME topo_graph_np${np} SOURCE topo_graph.c NP ${np} LABELS topo)
  aptus_mpi_test(NAME nbr_coll_np${np} SOURCE nbr_coll.c NP ${np} LABELS topo)
endforeach()
