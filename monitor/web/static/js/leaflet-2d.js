window.L_DISABLE_3D = true;
