# A History Server that raytpu_ray_history_server created, by {cluster_id}/{namespace}/{name}
# (or the id, {cluster_id}/historyServers/{namespace}/{name}).
terraform import raytpu_ray_history_server.history projects/my-project/locations/us-east5-b/clusters/ray-tpu/default/historyserver
