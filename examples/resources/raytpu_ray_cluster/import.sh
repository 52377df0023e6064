# A RayCluster that raytpu_ray_cluster created, by {cluster_id}/{namespace}/{name}
# (or the id, {cluster_id}/rayClusters/{namespace}/{name}).
terraform import raytpu_ray_cluster.train projects/my-project/locations/us-east5-b/clusters/ray-tpu/default/train
