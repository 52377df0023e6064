# A cluster by its full id, by {project}/{location}/{name}, or by {location}/{name} with the
# provider's project.
terraform import raytpu_cluster.ray projects/my-project/locations/us-east5-b/clusters/ray-tpu
terraform import raytpu_cluster.ray my-project/us-east5-b/ray-tpu
terraform import raytpu_cluster.ray us-east5-b/ray-tpu
