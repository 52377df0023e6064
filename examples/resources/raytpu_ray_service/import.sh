# A RayService that raytpu_ray_service created, by {cluster_id}/{namespace}/{name}
# (or the id, {cluster_id}/rayServices/{namespace}/{name}).
terraform import raytpu_ray_service.llm projects/my-project/locations/us-east5-b/clusters/ray-tpu/default/llm
