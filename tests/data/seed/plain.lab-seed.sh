# Written by lab for one VM: what its user-data asks, for lab's own images,
# whose lab-seed.service runs it with `sh -eu` before sshd starts (their
# cloud-init stays off). A failing command fails the boot.
# the host name (meta-data's local-hostname)
printf '%s\n' test-vm >/etc/hostname
printf '%s\n' test-vm >/proc/sys/kernel/hostname
# root accepts lab's key, nothing else
mkdir -p -m 700 /root/.ssh
printf '%s\n' 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAZppvx6Gq0sW2Xdurgxcv1gaFClxCbbMcueVPkX0qeY lab' >/root/.ssh/authorized_keys
# this VM's host key, made by lab and pinned in its known_hosts
rm -f /etc/ssh/ssh_host_*
umask 077
printf '%s' '-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACApSTSFaw94pboZij6cB17h3r4RxyAGGeGML7tFlIfADwAAAJBTzMfPU8zH
zwAAAAtzc2gtZWQyNTUxOQAAACApSTSFaw94pboZij6cB17h3r4RxyAGGeGML7tFlIfADw
AAAEBd/hSaOepkzwEO1kdGgrr3D61I9E8L6AedG4ZJzK1bySlJNIVrD3iluhmKPpwHXuHe
vhHHIAYZ4Ywvu0WUh8APAAAAC2xhYi10ZXN0LXZtAQI=
-----END OPENSSH PRIVATE KEY-----
' >/etc/ssh/ssh_host_ed25519_key
umask 022
printf '%s\n' 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIClJNIVrD3iluhmKPpwHXuHevhHHIAYZ4Ywvu0WUh8AP lab-test-vm' >/etc/ssh/ssh_host_ed25519_key.pub
# eth0 as QEMU's user-mode network gives it by DHCP (network-config)
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
