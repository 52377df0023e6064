# A ComputeClass, by {cluster_id}/{name} (or the id, {cluster_id}/computeClasses/{name}).
terraform import raytpu_compute_class.v6e projects/my-project/locations/us-east5-b/clusters/ray-tpu/tpu-v6e-2x4
