# The add-on of a cluster, by the cluster's id (the same forms as raytpu_cluster).
terraform import raytpu_ray_operator.kuberay projects/my-project/locations/us-east5-b/clusters/training
