# A module input checked against the TPU catalog before anything is planned.
variable "slice_topology" {
  type        = string
  description = "Shape of the v6e slices, such as 4x4 or 8x8."
  default     = "4x4"

  validation {
    condition     = can(provider::raytpu::slice_shape("v6e", var.slice_topology))
    error_message = "slice_topology must be a v6e slice shape: see the raytpu TPU reference."
  }
}

output "chips_per_slice" {
  value = provider::raytpu::slice_shape("v6e", var.slice_topology).total_chips
}
